"""Crowdworker pages: entry (consent + instructions), the rating page, and their errors.

The rating page is one HTML shell; ``static/annotation/rating.js`` fetches items from the
JSON API so that the next item appears without a page reload.
"""

import math
import secrets
import time

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_http_methods
from django.views.i18n import JavaScriptCatalog

from annotation import worker_session
from annotation.models import Batch, BatchState, Participation
from annotation.rendering import render_markdown
from annotation.services import languages
from annotation.services.admission import (
    completion,
    completion_for_newcomer,
    needs_consent,
    needs_questionnaire,
)
from annotation.services.entry import Page, enter, take_over
from annotation.services.invitations import invitee_of
from annotation.services.questionnaire import record_answers
from annotation.setting_rules import MAX_COMMENT_CHARS
from core.errors import InvalidInput
from core.http.client import client_address

MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"

# (platform, parameter holding the worker id, further parameters kept with the entry)
PLATFORM_PARAMETERS = [
    ("prolific", "PROLIFIC_PID", ("STUDY_ID", "SESSION_ID")),
    ("mturk", "workerId", ("assignmentId", "hitId", "turkSubmitTo")),
    ("generic", "worker", ()),
]


class EntryError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


IDENTITY_PARAMETERS = ("PROLIFIC_PID", "workerId", "worker", "invite", "assignmentId")


def _has_identity(params) -> bool:
    return any(name in params for name in IDENTITY_PARAMETERS)


def identify_entry(params, batch: Batch) -> tuple[str, str, dict] | None:
    """(platform, worker id, entry parameters) from the link's query string.

    ``None`` means an MTurk preview (nobody to identify yet). Raises ``EntryError``
    naming the missing parameter. A personal invitation (``?invite=<token>``) names its
    invitee; a batch that requires invitations refuses every other link but those of the
    platforms it accepts (``admission_check``).
    """
    if params.get("assignmentId") == MTURK_PREVIEW:
        return None
    if "invite" in params:
        try:
            return "generic", invitee_of(batch, params.get("invite", "")), {}
        except InvalidInput as forged:
            raise EntryError(
                _("This invitation link is not valid for this study (check the link).")
            ) from forged
    for platform, id_param, extra_params in PLATFORM_PARAMETERS:
        if id_param in params:
            admission_check(batch, platform, params)
            worker_id = params.get(id_param, "").strip()
            if not worker_id:
                raise EntryError(
                    _("The link's %(parameter)s parameter is empty.") % {"parameter": id_param}
                )
            if platform == "mturk" and not params.get("assignmentId"):
                raise EntryError(_("The link has workerId but no assignmentId parameter."))
            extras = {name: params.get(name, "") for name in extra_params if name in params}
            return platform, worker_id, extras
    if "STUDY_ID" in params or "SESSION_ID" in params:
        raise EntryError(_("The link is missing the PROLIFIC_PID parameter."))
    if "hitId" in params or "assignmentId" in params:
        raise EntryError(_("The link is missing the workerId parameter."))
    raise EntryError(
        _(
            "The link is missing the worker id: PROLIFIC_PID (Prolific), workerId (MTurk) "
            "or worker (invitation link)."
        )
    )


INVITATION_ONLY = gettext_lazy(
    "This study takes part by personal invitation only: please use the link you were sent."
)
OTHER_STUDY = gettext_lazy(
    "This link belongs to another Prolific study: please open this study's own link."
)


def admission_check(batch: Batch, platform: str, params) -> None:
    """An invitation-only batch admits invitation links only — a platform's links only
    when the batch names it in ``accept_platforms`` — and a Prolific link must carry the
    batch's ``prolific_study_id`` as its ``STUDY_ID`` when the batch is invitation-only
    (a link of another study is refused in any batch that names its study)."""
    study = params.get("STUDY_ID", "")
    if batch.invitations_required:
        if platform not in batch.accept_platforms:
            raise EntryError(str(INVITATION_ONLY))
        if platform == "prolific" and study != batch.prolific_study_id:
            raise EntryError(str(OTHER_STUDY if study else INVITATION_ONLY))
    elif platform == "prolific" and batch.prolific_study_id and study:
        if study != batch.prolific_study_id:
            raise EntryError(str(OTHER_STUDY))


def unavailable(request: HttpRequest, batch: Batch | None, message: str, status: int):
    return render(
        request,
        "annotation/unavailable.html",
        {"batch": batch, "message": message},
        status=status,
    )


# the participation a browser may take over (it opened that worker's link elsewhere)
PENDING_SWITCH = "worker_pending_switch"
DEVICE_COOKIE = "device"
DEVICE_COOKIE_AGE = 365 * 24 * 3600


@require_GET
@ensure_csrf_cookie
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    """The study link: who is this, may they start, and consent + instructions."""
    batch = Batch.objects.filter(slug=slug).first()
    if batch is None:
        return unavailable(request, None, _("There is no study at this address."), 404)
    # until the participant is known: the batch's language the browser asks for
    asked_for = languages.choose(batch, _accept_language(request))
    translation.activate(asked_for)
    if batch.state != BatchState.LIVE:
        return unavailable(request, batch, _not_live_message(batch), 403)
    known = _participation(request, batch)
    if known is not None and not _has_identity(request.GET):
        # back from the rating page (e.g. to consent): this browser's own participation
        identity = (known.annotator.platform, known.annotator.platform_id, {})
    else:
        try:
            identity = identify_entry(request.GET, batch)
        except EntryError as missing:
            return unavailable(request, batch, missing.message, 400)
    if identity is None:  # an MTurk preview: the instructions, nothing handed out
        return render(request, "annotation/entry.html", _entry_context(batch, preview=True))
    platform, worker_id, extras = identity
    device = request.COOKIES.get(DEVICE_COOKIE) or secrets.token_urlsafe(16)
    try:
        decision = enter(
            batch,
            platform,
            worker_id,
            extras,
            browser_key=worker_session.browser_key(request.session, batch.slug),
            client_ip=client_address(request),
            device_id=device,
            language=asked_for,
        )
    except InvalidInput as bad:
        return unavailable(
            request, batch, _("The link is not valid: %(problem)s") % {"problem": bad}, 400
        )
    if decision.page == Page.ELSEWHERE:
        pending = dict(request.session.get(PENDING_SWITCH, {}))
        pending[batch.slug] = decision.participation.pk
        request.session[PENDING_SWITCH] = pending
        translation.activate(languages.settle(batch, decision.participation, ""))
    elif decision.participation is not None:
        worker_session.remember(request.session, batch.slug, decision.participation.annotator_id)
        _speak(request, batch, decision.participation)
    if decision.page in (Page.WAIT, Page.BUSY) and decision.participation is None:
        response = _waiting(request, batch, decision, platform)
    else:
        _stop_waiting(request, batch)
        response = _page_for(request, batch, decision, platform)
    response.set_cookie(
        DEVICE_COOKIE, device, max_age=DEVICE_COOKIE_AGE, httponly=True, samesite="Lax",
        secure=request.is_secure(),
    )  # fmt: skip
    return response


# {batch slug: [first, last]} times (epoch seconds) of this browser's waiting for a slot
WAITING = "worker_waiting"
# a wait not polled for this long was given up: opening the link again starts a new one
WAIT_FORGOTTEN_SECONDS = 5 * 60


def _waiting(request: HttpRequest, batch: Batch, decision, platform: str) -> HttpResponse:
    """The waiting page of a newcomer for whom every slot is held by others' leases (or
    the concurrency cap is reached): it asks again by itself after ``Retry-After``
    seconds, for up to ``wait_for_release_seconds`` in all (``X-Wait-Seconds-Left``
    says how long it may still wait); then it says that no place came back
    (``Page.FULL``) or that the study is busy (``Page.BUSY``)."""
    now = time.time()
    waits = dict(request.session.get(WAITING, {}))
    first, last = waits.get(batch.slug, (now, now))
    if now - last > WAIT_FORGOTTEN_SECONDS:
        first = now
    left = batch.wait_for_release_seconds - (now - first)
    waits[batch.slug] = (first, now)  # kept when it ran out: a reload shows the same end
    request.session[WAITING] = waits
    if left <= 0:
        page = Page.FULL if decision.page == Page.WAIT else Page.BUSY
        return _notice(request, batch, None, page, 0, platform=platform, waited=True)
    retry = max(1, min(decision.retry_after or 5, math.ceil(left)))
    response = render(
        request,
        "annotation/waiting.html",
        {"batch": batch, "busy": decision.page == Page.BUSY, "retry": retry, "left": int(left)},
    )  # 200, not 503: a wait is the page working as meant, not a server failing
    response["Retry-After"] = str(retry)
    response[WAIT_LEFT_HEADER] = str(int(left))
    return response


# how long the waiting page may still wait, so that its script can show it
WAIT_LEFT_HEADER = "X-Wait-Seconds-Left"


def _stop_waiting(request: HttpRequest, batch: Batch) -> None:
    if batch.slug in request.session.get(WAITING, {}):
        waits = dict(request.session[WAITING])
        waits.pop(batch.slug)
        request.session[WAITING] = waits


def _page_for(request: HttpRequest, batch: Batch, decision, platform: str) -> HttpResponse:
    page = decision.page
    if page == Page.QUESTIONNAIRE:
        return redirect(reverse("work-questionnaire", args=[batch.slug]))
    if page in (Page.CONSENT, Page.TASK):
        return render(request, "annotation/entry.html", _entry_context(batch, page=page))
    if page == Page.ELSEWHERE:
        return render(
            request,
            "annotation/elsewhere.html",
            {"batch": batch, "action": reverse("work-switch", args=[batch.slug])},
            status=409,
        )
    return _notice(request, batch, decision.participation, page, decision.done, platform=platform)


NOTICES = {
    Page.FULL: (
        gettext_lazy("This study is full"),
        gettext_lazy(
            "Every item already has all the answers it needs, so there is nothing left for "
            "you to do. Thank you for your interest."
        ),
    ),
    Page.BUSY: (
        gettext_lazy("Please try again in a few minutes"),
        gettext_lazy(
            "The study has as many people working on it as it can take at once. Please "
            "come back in a few minutes."
        ),
    ),
    Page.LIMITED: (
        gettext_lazy("Too many new entries"),
        gettext_lazy(
            "Too many people entered this study from your network in the last hour. "
            "Please try again later."
        ),
    ),
    Page.SCREENED_OUT: (
        gettext_lazy("Thank you — you were screened out of this study"),
        gettext_lazy("This study has no more items for you. Thank you for your time."),
    ),
    Page.DONE: (
        gettext_lazy("Thank you!"),
        gettext_lazy("There are no more items for you in this study."),
    ),
}
# what the page says when a newcomer waited as long as the batch allows
WAITED_NOTICES = {
    Page.FULL: (
        gettext_lazy("No place came back in time"),
        gettext_lazy(
            "The last items are still being rated by other people, and none of them came "
            "back while you waited. Thank you for waiting."
        ),
    ),
    Page.BUSY: NOTICES[Page.BUSY],
}
NOTICE_STATUS = {Page.BUSY: 503, Page.LIMITED: 429}


def _notice(
    request, batch: Batch, participation, page: str, done: int, *, platform: str, waited=False
) -> HttpResponse:
    title, message = (WAITED_NOTICES if waited else NOTICES)[page]
    ending = (
        completion(batch, participation, done)
        if participation is not None
        else completion_for_newcomer(batch, platform)
    )
    return render(
        request,
        "annotation/notice.html",
        {
            "batch": batch,
            "page": page,
            "title": title,
            "message": message,
            "ending": ending if page != Page.BUSY and page != Page.LIMITED else None,
            "platform": platform,
        },
        status=NOTICE_STATUS.get(page, 200),
    )


def _entry_context(batch: Batch, *, preview: bool = False, page: str = "") -> dict:
    texts = languages.texts_in(batch, translation.get_language())
    return {
        "batch": batch,
        "kind": batch.task_kind,
        "instructions_html": render_markdown(texts.instructions),
        "consent_html": render_markdown(texts.consent_text),
        "needs_consent": page == Page.CONSENT,
        "n_options": len(batch.task_kind.options(batch)),
        "n_questions": len(texts.questionnaire),
        "preview": preview,
    }


@require_http_methods(["POST"])
def consent(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    participation = _participation(request, batch)
    if participation is None:
        return unavailable(request, batch, str(OPEN_THE_LINK), 403)
    _speak(request, batch, participation)
    if participation.consented_at is None:
        participation.consented_at = timezone.now()
        participation.save(update_fields=["consented_at"])
    if needs_questionnaire(batch, participation):
        return redirect(reverse("work-questionnaire", args=[batch.slug]))
    return redirect(reverse("work-task", args=[batch.slug]))


@require_http_methods(["GET", "POST"])
@ensure_csrf_cookie
def questionnaire(request: HttpRequest, slug: str) -> HttpResponse:
    """The batch's background questions, once, after consent and before the first item."""
    batch = get_object_or_404(Batch, slug=slug)
    participation = _participation(request, batch)
    if participation is None:
        return unavailable(request, batch, str(OPEN_THE_LINK), 403)
    language = _speak(request, batch, participation)
    if needs_consent(batch, participation):
        return redirect(reverse("work-entry", args=[batch.slug]))
    if not needs_questionnaire(batch, participation):
        return redirect(reverse("work-task", args=[batch.slug]))
    answers, problems = dict(request.POST.items()), {}
    if request.method == "POST":
        try:
            record_answers(batch, participation, answers)
        except InvalidInput as wrong:  # every question with a problem is flagged
            problems = dict(getattr(wrong, "problems", {wrong.field: wrong.message}))
        else:
            return redirect(reverse("work-task", args=[batch.slug]))
    return render(
        request,
        "annotation/questionnaire.html",
        {
            "batch": batch,
            "questions": [
                {
                    **question,
                    "answer": answers.get(question["id"]),
                    "problem": problems.get(question["id"]),
                    # the keyboard starts at the first question to fix
                    "first_problem": question["id"] == next(iter(problems), None),
                }
                for question in languages.texts_in(batch, language).questionnaire
            ],
            "problems": problems,
        },
        status=400 if problems else 200,
    )


@require_http_methods(["POST"])
def switch_browser(request: HttpRequest, slug: str) -> HttpResponse:
    """Continue in this browser: it takes the participation over from the other one."""
    batch = get_object_or_404(Batch, slug=slug)
    pending = dict(request.session.get(PENDING_SWITCH, {}))
    participation = Participation.objects.filter(batch=batch, pk=pending.pop(slug, None)).first()
    if participation is None:
        return unavailable(request, batch, str(OPEN_THE_LINK), 403)
    request.session[PENDING_SWITCH] = pending
    take_over(batch, participation, worker_session.browser_key(request.session, batch.slug))
    worker_session.remember(request.session, batch.slug, participation.annotator_id)
    _speak(request, batch, participation)
    return redirect(reverse("work-entry", args=[batch.slug]))


@require_GET
@ensure_csrf_cookie
def task(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    participation = _participation(request, batch)
    if participation is None:
        return unavailable(request, batch, str(OPEN_THE_LINK), 403)
    texts = languages.texts_in(batch, _speak(request, batch, participation))
    if needs_consent(batch, participation):
        return redirect(reverse("work-entry", args=[batch.slug]))
    if needs_questionnaire(batch, participation):
        return redirect(reverse("work-questionnaire", args=[batch.slug]))
    return render(
        request,
        "annotation/task.html",
        {
            "batch": batch,
            "kind": batch.task_kind,
            "options": batch.task_kind.options(batch, texts.scale_labels),
            "widget": batch.task_kind.widget_config(batch),
            "max_comment_chars": MAX_COMMENT_CHARS,
            "instructions_html": render_markdown(texts.instructions),
            "platform": participation.annotator.platform,
        },
    )


def _participation(request: HttpRequest, batch: Batch) -> Participation | None:
    annotator_pk = worker_session.annotator_for_batch(request.session, batch.slug)
    if annotator_pk is None:
        return None
    return Participation.objects.filter(batch=batch, annotator_id=annotator_pk).first()


def _not_live_message(batch: Batch) -> str:
    if batch.state == BatchState.DRAFT:
        return _("This study has not started yet.")
    if batch.state == BatchState.PAUSED:
        return _("This study is paused at the moment. Please try again later.")
    return _("This study is closed and accepts no more answers. Thank you for your interest.")


OPEN_THE_LINK = gettext_lazy("Open the study link from your crowd platform.")


def _accept_language(request: HttpRequest) -> str:
    return request.headers.get("Accept-Language", "")


def _speak(request: HttpRequest, batch: Batch, participation: Participation) -> str:
    """Answer in the participant's language (chosen and stored at their entry)."""
    language = languages.settle(batch, participation, _accept_language(request))
    worker_session.remember_language(request.session, batch.slug, language)
    translation.activate(language)
    return language


# the scripts' messages (djangojs catalogues in locale/); the worker pages have no other
_script_catalog = JavaScriptCatalog.as_view(domain="djangojs", packages=["annotation"])
# the same text for every participant of a language until the next deployment
SCRIPT_CATALOG_MAX_AGE = 3600


@require_GET
def script_catalog(request: HttpRequest, language: str) -> HttpResponse:
    """The worker scripts' messages in ``language`` (``gettext``, ``ngettext``,
    ``interpolate``), loaded by each page before its scripts: a file of this site, so the
    Content-Security-Policy needs no inline script."""
    if language not in languages.shipped():
        raise Http404("No such language.")
    with translation.override(language):
        response = _script_catalog(request)
    response["Cache-Control"] = f"public, max-age={SCRIPT_CATALOG_MAX_AGE}"
    return response
