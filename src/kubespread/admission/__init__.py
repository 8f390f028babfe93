"""Admission: what kube-apiserver does to a new object between decoding and storing it.

:mod:`.apiserver` answers one create request as the API server would (decode, mutating
admission, the registry's preparation, validation).
"""

from kubespread.admission.apiserver import (
    BUILTIN_PRIORITY_CLASSES,
    MUTATING_STEPS,
    AdmissionRequest,
    Rejected,
    admit,
    admit_object,
    admit_text,
)

__all__ = [
    "BUILTIN_PRIORITY_CLASSES",
    "MUTATING_STEPS",
    "AdmissionRequest",
    "Rejected",
    "admit",
    "admit_object",
    "admit_text",
]
