"""Data of the annotation study and the invariants the database holds by itself.

The exactly-N guarantee rests on two counters per item, changed only by
``annotation.services.slots``, in the same transaction as the rows they count:

* ``reserved_count`` = counted labels + open leases: a slot is taken when an item is
  leased and given back when the lease expires unsubmitted;
* ``counted_count`` = counted labels.

Check constraints keep ``0 <= counted_count <= reserved_count <= target`` where ``target``
is the batch's N copied onto the item (a check constraint cannot look at another table);
``slots.change_target`` updates it together with the batch. Leasing takes a slot with a
conditional ``UPDATE ... WHERE reserved_count < target``, so even a bug in the Python code
cannot push an item over N.

The models live in four modules by what they hold; they are all importable from here.
"""

from annotation.models.batch import (
    DEFAULT_ANNOTATIONS_PER_ITEM,
    DEFAULT_LEASE_SECONDS,
    Batch,
    BatchState,
    label_values,
    new_completion_code,
)
from annotation.models.content import Item, Query, Response
from annotation.models.people import Annotator, Participation
from annotation.models.work import (
    BUILT_IN_LABEL_RULES,
    REGULAR_STATUSES,
    Assignment,
    AssignmentState,
    BatchSnapshot,
    Label,
    LabelStatus,
    Purpose,
    ShownOrder,
)

__all__ = [
    "BUILT_IN_LABEL_RULES",
    "DEFAULT_ANNOTATIONS_PER_ITEM",
    "DEFAULT_LEASE_SECONDS",
    "REGULAR_STATUSES",
    "Annotator",
    "Assignment",
    "AssignmentState",
    "Batch",
    "BatchSnapshot",
    "BatchState",
    "Item",
    "Label",
    "LabelStatus",
    "Participation",
    "Purpose",
    "Query",
    "Response",
    "ShownOrder",
    "label_values",
    "new_completion_code",
]
