"""Schema check of deploy/: the KServe manifests against the fields KServe's CRDs require and
against each other, and every savedmodel-server flag they (and the Dockerfile) pass against the
flags the built server accepts. Nothing here can run Kubernetes or Docker; this catches the
mistakes that would only show up there.

  python3 deploy/check_manifests.py SERVER_BINARY"""
import pathlib
import re
import subprocess
import sys

import yaml

DEPLOY = pathlib.Path(__file__).resolve().parent
errors = []


def need(cond, what):
    if not cond:
        errors.append(what)
    return cond


def get(doc, path):
    cur = doc
    for key in path.split("."):
        if isinstance(cur, list):
            cur = cur[int(key)] if key.isdigit() and int(key) < len(cur) else None
        elif isinstance(cur, dict):
            cur = cur.get(key)
        else:
            return None
    return cur


def server_flags(binary):
    out = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(--[a-z_]+)", out))


def check_flags(args, flags, where):
    for a in args:
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            need(name in flags, f"{where}: savedmodel-server has no flag {name}")


def main():
    flags = server_flags(sys.argv[1])
    rt = yaml.safe_load((DEPLOY / "kserve" / "serving-runtime.yaml").read_text())
    isvc = yaml.safe_load((DEPLOY / "kserve" / "inference-service.yaml").read_text())

    need(rt.get("apiVersion") == "serving.kserve.io/v1alpha1", "ServingRuntime apiVersion")
    need(rt.get("kind") == "ServingRuntime", "ServingRuntime kind")
    need(bool(get(rt, "metadata.name")), "ServingRuntime metadata.name")
    formats = get(rt, "spec.supportedModelFormats") or []
    need(formats and all("name" in f for f in formats), "ServingRuntime supportedModelFormats[].name")
    protocols = get(rt, "spec.protocolVersions") or []
    need(set(protocols) <= {"v1", "v2", "grpc-v1", "grpc-v2"}, f"unknown protocolVersions {protocols}")
    containers = get(rt, "spec.containers") or []
    need(len(containers) == 1 and containers[0].get("name") == "kserve-container",
         "ServingRuntime needs one container named kserve-container")
    c = containers[0] if containers else {}
    need(bool(c.get("image")), "container image")
    args = c.get("args") or []
    check_flags(args, flags, "ServingRuntime args")
    rest_port = next((int(a.split("=")[1]) for a in args if a.startswith("--rest_api_port=")), None)
    ports = [p.get("containerPort") for p in c.get("ports") or []]
    need(rest_port in ports, f"--rest_api_port {rest_port} is not a containerPort {ports}")
    need(any(a.startswith("--model_base_path=/mnt/models") for a in args),
         "the model must be read from /mnt/models (KServe's storage initializer)")
    for probe, path in (("readinessProbe", "/v2/health/ready"), ("livenessProbe", "/v2/health/live")):
        need(get(c, f"{probe}.httpGet.path") == path, f"{probe} must GET {path}")
        need(get(c, f"{probe}.httpGet.port") == rest_port, f"{probe} must use the REST port")
    prom_port = get(rt, "spec.annotations")["prometheus.kserve.io/port"]
    need(int(prom_port) == rest_port, "metrics are served on the REST port")

    need(isvc.get("apiVersion") == "serving.kserve.io/v1beta1", "InferenceService apiVersion")
    need(isvc.get("kind") == "InferenceService", "InferenceService kind")
    model = get(isvc, "spec.predictor.model") or {}
    need(model.get("runtime") == get(rt, "metadata.name"), "InferenceService runtime name")
    need(get(model, "modelFormat.name") in [f["name"] for f in formats], "modelFormat not supported")
    need(model.get("protocolVersion") in protocols, "protocolVersion not offered by the runtime")
    need(bool(model.get("storageUri")), "storageUri")

    docker = (DEPLOY / "Dockerfile").read_text()
    entry = re.search(r'ENTRYPOINT \[(.*)\]', docker)
    need(entry is not None, "Dockerfile ENTRYPOINT")
    if entry:
        check_flags(re.findall(r'"([^"]+)"', entry.group(1)), flags, "Dockerfile ENTRYPOINT")
    need("scripts/install-deps.sh" in docker, "the image builds with the project's scripts")
    exposed = {int(p) for p in re.findall(r"EXPOSE ([0-9 ]+)", docker)[0].split()}
    need(exposed == {8500, 8501}, f"EXPOSE {exposed}")

    for e in errors:
        print(f"check_manifests: {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print("check_manifests: deploy/ manifests consistent with savedmodel-server's flags")


if __name__ == "__main__":
    main()
