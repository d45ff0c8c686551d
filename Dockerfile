FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data
WORKDIR /app

COPY pyproject.toml README.md LICENSE ./
RUN pip install --no-cache-dir .

COPY . .
# collectstatic needs settings that load; the real key comes from the environment.
RUN SECRET_KEY=build-only DEBUG=0 python manage.py collectstatic --noinput -v0

RUN useradd --create-home app && mkdir -p /data && chown app /data
USER app
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "-b", "0.0.0.0:8000", "-w", "3", "--access-logfile", "-"]
