from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config.favicon import favicon
from config.health import healthz, readyz
from core.http.headers import allow_inline_styles
from core.jobs import study_urls
from core.logins.views import ThrottledLoginView

urlpatterns = [
    path("", include("annotation.worker_urls")),  # first: the crowd's requests (its docstring)
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("favicon.ico", favicon, name="favicon"),
    # before annotation's /manage/<slug>/ pages, which would take /manage/census/ (and
    # every study type's /manage/<type>/) as a batch
    path("", include(study_urls.pages())),
    path("", include("annotation.urls")),
    path("api/v1/", include("annotation.api.urls")),
    path("api/v1/", include("analysis.api.urls")),
    path("api/v1/", include("core.api.urls")),
    path("", include("analysis.urls")),
    path("", include("crowd.urls")),
    path("api/v1/", include("crowd.api_urls")),
    path("api/v1/", include(study_urls.api())),
    path("api/v1/", include("diversity.genie.api.urls")),
    path("api/v1/", include("diversity.corpora.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # the split view serves Swagger UI's start-up script as a file (no inline script: CSP)
    path(
        "api/docs/",
        allow_inline_styles(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
    path("accounts/login/", ThrottledLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]

# Errors outside views answer like errors inside them: JSON on the API, a page elsewhere.
handler400 = "core.http.errors.bad_request"
handler403 = "core.http.errors.permission_denied"
handler404 = "core.http.errors.page_not_found"
handler500 = "core.http.errors.server_error"
