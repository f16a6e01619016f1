// DecodeSession: filled in by its issue.
