// MediaIO: filled in by its issue.
