"""A pod spec's volumes and its containers' volume mounts (ValidateVolumes, ValidateVolumeMounts).

Neither is a modelled field: kubespread does not schedule on volumes, so both are read from the
raw manifest (``Model.extra``), where the strict decoder has already checked their types. What
is checked is what makes a mount name nothing, as kube-apiserver refuses it:

- each volume: exactly one volume type (``must specify a volume type``; each type past the
  first, in kube's order, ``may not specify more than 1 volume type``), then a name that is
  given, a DNS-1123 label and not a repeat. A volume with any of these errors is not
  registered, so a mount naming it is not found either;
- each mount of a container: a name (Required), one that names a registered volume (Not
  found), a mountPath (Required), unique within the container (``must be unique``).

Not checked: the fields inside each volume type (hostPath's path, a secret's items, ...), and
a mount's subPath, mountPropagation, recursiveReadOnly and the overlap with volumeDevices.
"""

from __future__ import annotations

from typing import Any, Final

from kubespread.api.errors import FieldError, Path
from kubespread.api.validation.names import validate_dns1123_label

__all__ = ["VOLUME_TYPES", "validate_volume_mounts", "validate_volumes"]

#: the volume types in the order validateVolumeSource looks at them: (JSON field, the path
#: its "more than 1" error names; kube spells two of them differently from the field)
VOLUME_TYPES: Final = (
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)


def _entries(raw: Any) -> list[Any]:
    """A raw list field; anything else (absent, null) holds nothing."""
    return raw if isinstance(raw, list) else []


def _string(entry: Any, key: str) -> str:
    value = entry.get(key) if isinstance(entry, dict) else None
    return value if isinstance(value, str) else ""


def _volume_type_errors(volume: Any, path: Path) -> list[FieldError]:
    given = [at for key, at in VOLUME_TYPES if isinstance(volume, dict) and volume.get(key) is not None]
    if not given:
        return [FieldError.required(path, "must specify a volume type")]
    more = "may not specify more than 1 volume type"
    return [FieldError.forbidden(path.child(at), more) for at in given[1:]]


def validate_volumes(raw: Any, path: Path) -> tuple[set[str], list[FieldError]]:
    """``spec.volumes`` (raw): the names a mount may use, and the errors."""
    names: set[str] = set()
    errs: list[FieldError] = []
    for i, volume in enumerate(_entries(raw)):
        p = path.index(i)
        name = _string(volume, "name")
        found = _volume_type_errors(volume, p)
        if not name:
            found.append(FieldError.required(p.child("name")))
        else:
            found.extend(validate_dns1123_label(name, p.child("name")))
        if name in names:
            found.append(FieldError.duplicate(p.child("name"), name))
        if found:
            errs.extend(found)
        else:
            names.add(name)
    return names, errs


def validate_volume_mounts(raw: Any, volumes: set[str], path: Path) -> list[FieldError]:
    """A container's ``volumeMounts`` (raw) against the pod's registered volumes."""
    errs: list[FieldError] = []
    mount_paths: set[str] = set()
    for i, mount in enumerate(_entries(raw)):
        p = path.index(i)
        name, mount_path = _string(mount, "name"), _string(mount, "mountPath")
        if not name:
            errs.append(FieldError.required(p.child("name")))
        if name not in volumes:
            errs.append(FieldError.not_found(p.child("name"), name))
        if not mount_path:
            errs.append(FieldError.required(p.child("mountPath")))
        if mount_path in mount_paths:
            errs.append(FieldError.invalid(p.child("mountPath"), mount_path, "must be unique"))
        mount_paths.add(mount_path)
    return errs
