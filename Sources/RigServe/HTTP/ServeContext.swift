import Hummingbird
import NIOCore

/// The request context of `rig serve`: Hummingbird's, plus the peer's address (a
/// client without a client id is known by it).
public struct ServeContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The connection (the live view bounds what its socket holds unsent).
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// Bodies over 64 KB are refused (413).
    public var maxUploadSize: Int { ServeApp.maxBodyBytes }
}
