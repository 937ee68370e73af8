import Testing

@testable import RigGroup

@Suite struct GroupMessagesTests {
    @Test func topicsOfAnotherGroupAreNotOurs() {
        let topics = GroupTopics(group: "shoot")
        #expect(topics.classify("rig/shoot/leader/step") == .step)
        #expect(topics.classify("rig/shoot/a/armed") == .armed("a"))
        #expect(topics.classify("rig/shoot2/leader/step") == nil)
        #expect(topics.classify("rig/other/leader/step") == nil)
        #expect(topics.classify("rig/shoot/a/b/armed") == nil)
    }
}
