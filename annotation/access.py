"""Who may do what with batches: the annotation app's permissions and the checks on them.

Granted to the staff roles of ``core.roles`` (declared on ``AnnotationConfig``):

* researcher — read batches, items and labels, export labels, follow jobs;
* admin — also create, edit and publish batches, upload items, see annotators' platform
  ids and exclude / re-include annotators.

Every page and API endpoint asks these ``can_*`` functions (``core.access``).
"""

from core.access import holds, permission_class

can_view_batches = holds("annotation.view_batch")
can_manage_batches = holds("annotation.change_batch")
can_manage_annotators = holds("annotation.manage_annotators")
can_export = holds("annotation.export_batch")


def abilities(user) -> dict[str, bool]:
    """The flags the staff templates use to show or hide actions."""
    return {
        "can_manage": can_manage_batches(user),
        "can_manage_annotators": can_manage_annotators(user),
        "can_export": can_export(user),
    }


CanViewBatches = permission_class(can_view_batches)
CanManageBatches = permission_class(can_manage_batches, read_check=can_view_batches)
CanManageAnnotators = permission_class(can_manage_annotators)
CanExport = permission_class(can_export)
