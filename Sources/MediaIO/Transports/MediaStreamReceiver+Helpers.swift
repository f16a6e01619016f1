// MediaStreamReceiver's helpers that hold no state: RTP events mapped to
// the receiver's events.

import RTPPayload

extension MediaStreamReceiver {
    static func events(_ events: [RTPStreamReceiver.Event]) -> [Event] {
        events.map { event in
            switch event {
            case .sample(let sample): .sample(sample)
            case .loss(let loss): .loss(loss.description)
            }
        }
    }
}
