/// Cascable Recipes "Basic User Input" GATT service: UUIDs from the spec.
public enum BUIService {
    public static let service = "9A43142A-F619-41FF-945D-527023EF5B9D"
    public static let userMessage = "DEFF81CC-0F74-4E86-BA01-F5D34E1C33E6"
    public static let continueAvailable = "941680A1-A4D9-48DF-927B-2E19870F8085"
    public static let stopAvailable = "FD64C111-356F-4968-85C2-2DD979E3878E"
    public static let continueButtonState = "EB366CE4-1952-4A55-A319-7E27A865554A"
    public static let stopButtonState = "A83173E8-9546-4D91-A736-B087AE514321"

    /// Shown when Cascable writes a zero-length User Message (the recipe has none).
    public static let defaultMessage = "Waiting for the rig to continue"
    /// Shown instead of the user message while Continue Available is 0 (fits the LCD's 15 characters).
    public static let recipeRunningMessage = "recipe running"

    /// What the rig shows for Cascable's user message: the message only while Continue
    /// Available is 1 (the spec: "when not available … the user message should be
    /// hidden"); otherwise that the recipe is running.
    public static func visibleMessage(_ message: String, continueAvailable: Bool) -> String {
        continueAvailable ? message : recipeRunningMessage
    }

    /// Characteristic indices in the application.
    enum Index {
        static let userMessage = 0
        static let continueAvailable = 1
        static let stopAvailable = 2
        static let continueButton = 3
        static let stopButton = 4
    }
}
