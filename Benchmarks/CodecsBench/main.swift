print("codecs-bench: no benchmarks yet")
