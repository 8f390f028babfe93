# The image `kubespread manifests --image` deploys: the scheduler, webhook and controller.
#   docker build -t registry.example.com/kubespread:0.1.0 .
# Only what the live modes need is installed (the `live` extra); the printed Deployments run it
# as user 65532 with a read-only root filesystem.
FROM python:3.11-slim
WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir '.[live]' && rm -rf /build
WORKDIR /
ENV PYTHONDONTWRITEBYTECODE=1 MPLCONFIGDIR=/tmp
USER 65532:65532
CMD ["kubespread", "--help"]
