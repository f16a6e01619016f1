print("StreamRoundTrip: not written yet")
