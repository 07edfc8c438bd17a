#!/usr/bin/env python3
"""Writes an OCI image archive from a root directory, with no registry and no
image tool: one uncompressed layer, its config, manifest, index.json (the
annotation io.containerd.image.name keeps containerd from renaming the image
to docker.io) and oci-layout, as `ctr -n k8s.io images import` takes it.

  oci-archive.py ROOT NAME:TAG OUT.tar [--entrypoint CMD]... [--user UID]

The layer is reproducible: entries sorted, times, owners and groups fixed.
"""
import argparse
import hashlib
import io
import json
import os
import tarfile


def deterministic(info):
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def layer_of(root):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        for directory, names, files in os.walk(root):
            names.sort()
            for name in sorted(names + files):
                path = os.path.join(directory, name)
                layer.add(path, arcname=os.path.relpath(path, root), recursive=False, filter=deterministic)
    return buffer.getvalue()


def blob(archive, data):
    digest = hashlib.sha256(data).hexdigest()
    info = deterministic(tarfile.TarInfo("blobs/sha256/" + digest))
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))
    return {"digest": "sha256:" + digest, "size": len(data)}


def text_file(archive, name, data):
    info = deterministic(tarfile.TarInfo(name))
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("name")
    parser.add_argument("out")
    parser.add_argument("--entrypoint", action="append", default=[])
    parser.add_argument("--user", default="")
    args = parser.parse_args()

    layer = layer_of(args.root)
    layer_digest = "sha256:" + hashlib.sha256(layer).hexdigest()  # uncompressed: diff_id = digest
    image_config = {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}
    if args.entrypoint:
        image_config["Entrypoint"] = args.entrypoint
    if args.user:
        image_config["User"] = args.user
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": image_config,
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    tmp = args.out + ".tmp"
    with tarfile.open(tmp, mode="w", format=tarfile.PAX_FORMAT) as archive:
        layer_ref = dict(blob(archive, layer), mediaType="application/vnd.oci.image.layer.v1.tar")
        config_ref = dict(blob(archive, json.dumps(config, sort_keys=True).encode()),
                          mediaType="application/vnd.oci.image.config.v1+json")
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": config_ref, "layers": [layer_ref]}
        manifest_ref = dict(blob(archive, json.dumps(manifest, sort_keys=True).encode()),
                            mediaType="application/vnd.oci.image.manifest.v1+json")
        manifest_ref["annotations"] = {"io.containerd.image.name": args.name,
                                       "org.opencontainers.image.ref.name": args.name.rsplit(":", 1)[-1]}
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": [manifest_ref]}
        text_file(archive, "oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode())
        text_file(archive, "index.json", json.dumps(index, sort_keys=True).encode())
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
