FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data
WORKDIR /app

COPY pyproject.toml README.md LICENSE ./
RUN pip install --no-cache-dir .

COPY . .
# collectstatic needs settings that load; the real key comes from the environment.
RUN SECRET_KEY=build-only DEBUG=0 python manage.py collectstatic --noinput -v0

RUN useradd --create-home app && mkdir -p /data && chown app /data && chown -R app staticfiles
USER app
EXPOSE 8000
CMD ["gunicorn", "-c", "deploy/gunicorn.conf.py", "config.wsgi"]
