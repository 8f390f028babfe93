"""ImageLocality: favour nodes that already hold the pod's container images."""

from kubespread.scheduler.plugins.imagelocality.image_locality import ImageLocality, normalized_image_name

__all__ = ["ImageLocality", "normalized_image_name"]
