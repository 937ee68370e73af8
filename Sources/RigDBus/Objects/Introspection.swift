/// Builds `org.freedesktop.DBus.Introspectable.Introspect` XML for an exported object.
extension BusCore {
    func introspectionXML(for object: DBusObject) -> String {
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
             <interface name="org.freedesktop.DBus.Introspectable">
              <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
             </interface>
             <interface name="org.freedesktop.DBus.Properties">
              <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
              <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
              <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
              <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
             </interface>

            """
        if object.isObjectManager {
            xml += """
                 <interface name="org.freedesktop.DBus.ObjectManager">
                  <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
                  <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
                  <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
                 </interface>

                """
        }
        for interface in object.interfaces {
            xml += " <interface name=\"\(interface.name)\">\n"
            for (name, method) in interface.methods.sorted(by: { $0.key < $1.key }) {
                xml += "  <method name=\"\(name)\">"
                for type in DBusSignature.completeTypes(method.inSignature) ?? [] {
                    xml += "<arg type=\"\(type)\" direction=\"in\"/>"
                }
                for type in DBusSignature.completeTypes(method.outSignature) ?? [] {
                    xml += "<arg type=\"\(type)\" direction=\"out\"/>"
                }
                xml += "</method>\n"
            }
            for (name, signature) in interface.signals.sorted(by: { $0.key < $1.key }) {
                xml += "  <signal name=\"\(name)\">"
                for type in DBusSignature.completeTypes(signature) ?? [] { xml += "<arg type=\"\(type)\"/>" }
                xml += "</signal>\n"
            }
            for (name, property) in interface.properties.sorted(by: { $0.key < $1.key }) {
                let access = property.set == nil ? "read" : "readwrite"
                xml += "  <property name=\"\(name)\" type=\"\(property.signature)\" access=\"\(access)\"/>\n"
            }
            xml += " </interface>\n"
        }
        for child in childNames(of: object.path) {
            xml += " <node name=\"\(child)\"/>\n"
        }
        return xml + "</node>\n"
    }

    /// The first path element below `path` of every exported object under it.
    private func childNames(of path: String) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names = Set<String>()
        for other in objects.keys where other.hasPrefix(prefix) && other != path {
            if let first = other.dropFirst(prefix.count).split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
}
