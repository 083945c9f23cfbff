"""funnelling."""
