// The RFC 8867 trials the RMCAT tests share: each case runs once per test process, on its seed.

import TestSupport

/// Each RMCAT case's seeded run, made on first use and shared by the tests that check it.
enum RMCATRuns {
    static func run(_ configuration: CongestionTrialConfiguration) -> CongestionTrialResult {
        do {
            return try CongestionTrial.run(configuration)
        } catch {
            preconditionFailure("RMCAT case \(configuration.name) could not start: \(error)")
        }
    }

    static let variableCapacity = run(RMCATCases.variableCapacity())
    static let variableCapacityTwoFlows = run(RMCATCases.variableCapacityTwoFlows())
    static let congestedFeedbackLink = run(RMCATCases.congestedFeedbackLink())
    static let competingFlows = run(RMCATCases.competingFlows())
    static let competingTCP300 = run(RMCATCases.competingTCP(queue: .milliseconds(300)))
    static let competingTCP1000 = run(RMCATCases.competingTCP(queue: .milliseconds(1000)))
    static let pauseAndResume = run(RMCATCases.pauseAndResume())
}
