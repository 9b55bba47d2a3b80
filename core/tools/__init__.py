"""Tools and plugins (seed 003): the operation registry, admission, the capability broker,
receipts and their rungs, the built-in tools, the create-asset output check.
"""
