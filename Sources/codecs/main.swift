import MediaCore

print("codecs: no command yet")
