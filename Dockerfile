# The retrace command in a small image: built in a Rust image, run in a slim Debian one as an
# unprivileged user. `git` is there for `retrace nightly`; Terraform is not (the check is
# reported as not run without it): derive an image that adds the terraform binary and a
# provider mirror when the nightly job should run the Terraform check.
#
#   docker build -t retrace .
#   docker run --rm -v "$PWD:/work" retrace reconcile --project . --state terraform.tfstate --logs trail

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p reconciler --bin retrace \
    && cp target/release/retrace /retrace

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home --uid 10001 retrace
COPY --from=build /retrace /usr/local/bin/retrace
USER retrace
WORKDIR /work
ENTRYPOINT ["retrace"]
