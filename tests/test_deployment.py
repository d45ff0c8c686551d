"""docker-compose.yml names every service and every variable the settings require.

The test suite runs no Docker; this checks the file a deployer will use (bench/compose_web.py
brings the stack itself up and runs the crowd through it).
"""

import re
from pathlib import Path

import pytest
import yaml
from django.test import Client

COMPOSE = Path(__file__).resolve().parents[1] / "docker-compose.yml"
APP_SERVICES = ["web", "worker", "beat"]
REQUIRED_VARIABLES = ["DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"]


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load(COMPOSE.read_text())


def test_every_service_is_declared(compose):
    assert set(compose["services"]) == {
        "proxy", "web", "worker", "beat", "db", "redis", "pgbouncer", "setup"
    }  # fmt: skip
    # PgBouncer only with its profile, in transaction mode, in front of the database
    bouncer = compose["services"]["pgbouncer"]
    assert bouncer["profiles"] == ["pgbouncer"]
    ini = (COMPOSE.parent / "deploy" / "pgbouncer" / "pgbouncer.ini").read_text()
    assert "pool_mode = transaction" in ini and "host=db port=5432" in ini
    environment = compose["services"]["web"]["environment"]
    assert "${DATABASE_HOST:-db}" in environment["DATABASE_URL"]
    assert environment["DATABASE_DIRECT_URL"].endswith("@db:5432/judgments")


def test_only_the_proxy_is_published(compose):
    # gunicorn's sync workers must never face slow clients directly (deploy/nginx)
    published = {name for name, service in compose["services"].items() if "ports" in service}
    assert published == {"proxy"}
    assert compose["services"]["proxy"]["ports"] == ["${PORT:-8000}:8080"]
    mounts = compose["services"]["proxy"]["volumes"]
    assert "./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro" in mounts
    assert "deploy/gunicorn.conf.py" in compose["services"]["web"]["command"]


def test_nginx_body_cap_sits_just_above_the_upload_cap(settings):
    config = (COMPOSE.parent / "deploy" / "nginx" / "nginx.conf").read_text()
    megabytes = int(re.search(r"client_max_body_size (\d+)m;", config).group(1))
    assert settings.UPLOAD_MAX_BYTES < megabytes * 1024 * 1024 <= 2 * settings.UPLOAD_MAX_BYTES


def test_the_proxy_looks_the_app_up_by_name_while_it_runs():
    # `docker compose up` after an upgrade recreates the web containers with new addresses,
    # and --scale adds some: nginx resolves a name in an upstream block once, at start
    # (then answered 502 until restarted); through a variable it asks Docker's DNS again
    config = (COMPOSE.parent / "deploy" / "nginx" / "nginx.conf").read_text()
    directives = "\n".join(line.split("#")[0] for line in config.splitlines())
    assert re.search(r"^\s*resolver 127\.0\.0\.11 valid=\d+s", directives, re.MULTILINE)
    assert not re.search(r"^\s*upstream ", directives, re.MULTILINE)
    variable = re.search(r"set \$(\w+) http://web:8000;", directives)
    assert variable and f"proxy_pass ${variable.group(1)};" in directives


def test_a_pg_isready_healthcheck_has_a_client_to_run_it(compose):
    # Debian's pg_isready is a wrapper that fails without a postgresql-client package
    for name, service in compose["services"].items():
        if "pg_isready" not in str(service.get("healthcheck", {}).get("test", "")):
            continue
        if "build" not in service:
            assert service["image"].startswith("postgres:"), name
            continue
        dockerfile = (COMPOSE.parent / service["build"] / "Dockerfile").read_text()
        assert "postgresql-client" in dockerfile, name


@pytest.mark.parametrize("service", APP_SERVICES)
def test_app_services_get_the_required_environment(compose, service):
    environment = compose["services"][service]["environment"]
    missing = [name for name in REQUIRED_VARIABLES if name not in environment]
    assert not missing, f"{service} lacks {missing}"
    assert environment["DEBUG"] == "0"
    assert environment["DATABASE_URL"].startswith("postgres://")
    assert environment["REDIS_URL"].startswith("redis://redis:")
    assert compose["services"][service]["depends_on"]["db"]["condition"] == "service_healthy"


@pytest.mark.parametrize("service", ["db", "redis", "proxy", "web", "worker"])
def test_services_have_healthchecks(compose, service):
    assert compose["services"][service]["healthcheck"]["test"]


def test_scaled_web_instances_share_no_volume_they_write_at_start(compose):
    # `--scale web=N` creates the instances at once: two containers filling one new volume
    # from the image, or running collectstatic into it, at the same time fail. The one-shot
    # "setup" service migrates and fills the static files' volume before any of them starts.
    services = compose["services"]
    static_writers = [
        name
        for name, service in services.items()
        for mount in service.get("volumes", [])
        if mount.startswith("staticfiles:") and not mount.endswith(":ro")
    ]
    assert static_writers == ["setup"]
    for name in APP_SERVICES:
        assert services[name]["depends_on"]["setup"] == {
            "condition": "service_completed_successfully"
        }
        assert "migrate" not in str(services[name].get("command"))
    setup = services["setup"]
    assert "migrate_serialised" in setup["command"] and "collectstatic" in setup["command"]
    # migrations go straight to PostgreSQL, which setup waits for, also with PgBouncer
    assert setup["environment"]["DATABASE_URL"].endswith("@db:5432/judgments")
    assert setup["environment"]["DATABASE_TRANSACTION_POOLING"] == "0"
    assert setup["depends_on"] == {"db": {"condition": "service_healthy"}}


def test_data_survives_in_volumes(compose):
    assert {"pgdata", "appdata"} <= set(compose["volumes"])
    assert "appdata:/data" in compose["services"]["worker"]["volumes"]


def test_commands_point_at_real_entry_points(compose):
    assert "config.wsgi" in compose["services"]["web"]["command"]
    assert compose["services"]["worker"]["command"][:3] == ["celery", "-A", "config"]
    assert compose["services"]["beat"]["command"][3] == "beat"


@pytest.mark.django_db
def test_health_endpoint_answers():
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "in-process"}


def test_the_benchmarks_stand_ins_cover_every_base_image(compose):
    # bench/compose/standins builds, from Debian's packages, every public image the stack
    # starts from, for machines that reach no image registry (bench/compose_web.py)
    import re

    from bench.compose_web import BASE_IMAGES

    root = COMPOSE.parent
    pulled = {
        service["image"] for service in compose["services"].values() if "build" not in service
    }
    dockerfiles = [root / "Dockerfile", root / "deploy" / "pgbouncer" / "Dockerfile"]
    built_from = {
        re.search(r"^FROM (\S+)", path.read_text(), re.MULTILINE).group(1) for path in dockerfiles
    }
    standins = root / "bench" / "compose" / "standins"
    script = (standins / "build.sh").read_text()
    releases = re.search(r"^for release in ([a-z ]+); do$", script, re.MULTILINE).group(1)
    covered = set(BASE_IMAGES) | {f"debian:{release}-slim" for release in releases.split()}
    assert pulled | built_from <= covered
    for image in BASE_IMAGES:
        assert f"-t {image} " in script
    assert 'docker import - "debian:$release-slim"' in script
    override = yaml.safe_load((standins.parent / "bench.override.yml").read_text())
    assert set(override["services"]) <= set(compose["services"])
