"""Mission letters, mailbox and tray (seed 004): the letter contract, the mailbox and its chains,
the system blocks, receipt import and its window, packets, the sanitizer, posting, the tray.
"""
