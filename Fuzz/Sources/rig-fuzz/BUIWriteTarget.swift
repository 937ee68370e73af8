import Foundation
import Logging
import RigCore

@testable import RigBluetooth
@testable import RigStepSync

/// Cascable's writes to the BUI characteristics (any value, any length, from any central)
/// through the peripheral's write validation, and what it admits through the Wait-For-Input
/// state machine together with player and timer inputs. The first byte of each record picks
/// the input; the cycle must never press Continue twice for one wait.
enum BUIWriteTarget {
    static let characteristics: [GattCharacteristicSpec] = {
        // One paired phone, AA:BB:…: the other central and a write without a device are refused.
        let directory = NSTemporaryDirectory() + "rig-fuzz-paired-\(getpid())"
        let phones = PairedPhones(directory: directory)
        try? phones.add(PairedPhones.Phone(address: "AA:BB:CC:DD:EE:FF", adapter: "hci0"))
        return BUIPeripheral.characteristics(
            config: StepSyncConfig(), pairedPhones: phones, state: StateBox(), logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }),
            onInput: { _ in }, onMessage: { _ in })
    }()

    static func run(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        var settings = BUICycle.Settings()
        settings.stopRecipeAtEnd = data[0] & 1 != 0
        settings.stopOnFault = data[0] & 2 != 0
        settings.exposureGuardSeconds = data[0] & 4 != 0 ? 0.5 : 0
        var cycle = BUICycle(stepCount: Int(data[1] % 8) + 1, settings: settings, startsBeforeFirstStep: data[0] & 8 != 0)
        var i = 2
        while i < data.count {
            let op = data[i]
            i += 1
            var inputs: [BUICycle.Input] = []
            switch op % 12 {
            case 0, 1, 2:
                // A GATT write: characteristic, device, length, value.
                guard i + 1 < data.count else { return }
                let spec = characteristics[Int(data[i]) % characteristics.count]
                let length = min(Int(data[i + 1] % 24), data.count - i - 2)
                let value = Array(data[(i + 2)..<(i + 2 + length)])
                let device = op % 3 == 0 ? "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF" : op % 3 == 1 ? "/org/bluez/hci0/dev_11_22_33_44_55_66" : nil
                i += 2 + length
                guard let write = spec.write else { continue }
                do throws(GattWriteRefusal) {
                    try write(GattWrite(value: value, device: device, withoutResponse: false))
                    // Admitted: the flags must have been one byte of 0 or 1.
                    if spec.uuid == BUIService.continueAvailable.lowercased() || spec.uuid == BUIService.stopAvailable.lowercased() {
                        guard value.count == 1, value[0] <= 1 else { fuzzFail("a flag write of \(value) was admitted") }
                        inputs.append(
                            spec.uuid == BUIService.continueAvailable.lowercased() ? .continueAvailable(value[0] == 1) : .stopAvailable(value[0] == 1))
                    }
                } catch {
                    _ = error
                }
            case 3: inputs.append(.ready(step: Int(data[i - 1] / 12) % (cycle.stepCount + 2) - 1))
            case 4: inputs.append(.programEnded(stopped: data[i - 1] & 0x80 != 0))
            case 5: inputs.append(.timer(.releaseContinue))
            case 6: inputs.append(.timer(.releaseStop))
            case 7: inputs.append(.timer(.exposureGuard))
            case 8: inputs.append(.manualContinue)
            case 9: inputs.append(.manualStop)
            case 10: inputs.append(.continueAvailable(true))
            default: inputs.append(.continueAvailable(false))
            }
            for input in inputs {
                let before = cycle.presses
                let actions = cycle.handle(input)
                let downs = actions.filter { $0 == .notifyContinue(.down) }.count
                if downs > 1 || cycle.presses - before > 1 { fuzzFail("more than one Continue press for one input: \(actions)") }
            }
        }
    }
}
