"""Remedies: turn findings into reviewable patches (codemods, shim module, agent hook, advice)."""
