# The atomzero binary in a small image, for trainers and self-play workers (README, "Scale-out";
# deploy/ has Kubernetes and Slurm examples). Multi-stage: the build stage compiles the release
# binary with the `dist` profile (fat LTO); the runtime stage holds it and CA certificates.
#
#   docker build -t atomzero .                                     # CPU (workers, CPU trainer)
#   docker build -t atomzero:cuda --build-arg FEATURES=cuda \
#     --build-arg RUNTIME=nvidia/cuda:12.8.1-runtime-ubuntu24.04 .  # GPU trainer
#
# The configs are copied to /etc/atomzero/configs (e.g. --config /etc/atomzero/configs/default.toml).
ARG RUNTIME=debian:bookworm-slim

FROM rust:1.95-bookworm AS build
ARG FEATURES=""
WORKDIR /src
COPY . .
RUN cargo build --profile dist --locked -p atomzero --features "$FEATURES" \
 && cp target/dist/atomzero /usr/local/bin/atomzero

FROM ${RUNTIME}
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/atomzero /usr/local/bin/atomzero
COPY configs /etc/atomzero/configs
# Local mirrors of runs in object storage (mount a volume here or pass --cache).
ENV XDG_CACHE_HOME=/cache
ENTRYPOINT ["atomzero"]
CMD ["--help"]
