"""DynamicResources: dynamic resource claims. kubespread does not model claims; the plugin
takes part for the words it adds to an unschedulable pod's FitError message."""

from kubespread.scheduler.plugins.dynamicresources.post_filter import (
    MSG_NO_CLAIMS,
    DynamicResources,
    has_resource_claims,
)

__all__ = ["MSG_NO_CLAIMS", "DynamicResources", "has_resource_claims"]
