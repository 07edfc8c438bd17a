// Writes the golden delta snapshot files the tests read, with Go's own
// encoding/json, crypto/sha256 and compressors, as etcd-backup-restore does:
// its snapshotter marshals []*event (event{EtcdEvent *clientv3.Event
// `json:"etcdEvent"`; Time time.Time `json:"time"`}), appends the SHA-256 of
// that JSON, then compresses (gzip, zlib, or lzw LSB with 8-bit literals).
// The structs below carry the JSON tags of etcd 3.4's mvccpb.KeyValue and
// mvccpb.Event.
//
//	cd tests/data/backup-restore && go run generate.go
package main

import (
	"bytes"
	"compress/gzip"
	"compress/lzw"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

type keyValue struct {
	Key            []byte `json:"key,omitempty"`
	CreateRevision int64  `json:"create_revision,omitempty"`
	ModRevision    int64  `json:"mod_revision,omitempty"`
	Version        int64  `json:"version,omitempty"`
	Value          []byte `json:"value,omitempty"`
	Lease          int64  `json:"lease,omitempty"`
}

type etcdEvent struct {
	Type   int32     `json:"type,omitempty"` // 0 PUT, 1 DELETE
	Kv     *keyValue `json:"kv,omitempty"`
	PrevKv *keyValue `json:"prev_kv,omitempty"`
}

type event struct {
	EtcdEvent *etcdEvent `json:"etcdEvent"`
	Time      time.Time  `json:"time"`
}

func at(nanos int) time.Time { return time.Date(2024, 5, 1, 10, 0, 0, nanos, time.UTC) }

func write(name string, compress func(io.Writer) io.WriteCloser, data []byte) {
	var out bytes.Buffer
	if compress == nil {
		out.Write(data)
	} else {
		w := compress(&out)
		w.Write(data)
		w.Close()
	}
	if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
		panic(err)
	}
}

func main() {
	// Revisions 2..5 on top of a fresh cluster (revision 1): a put, a
	// transaction of two puts, a delete, a put under a lease.
	events := []*event{
		{&etcdEvent{Kv: &keyValue{Key: []byte("/registry/pods/a"), CreateRevision: 2, ModRevision: 2, Version: 1, Value: []byte("first")}}, at(123456789)},
		{&etcdEvent{Kv: &keyValue{Key: []byte("/registry/pods/b"), CreateRevision: 3, ModRevision: 3, Version: 1, Value: []byte{0, 1, 2, 255}}}, at(200000000)},
		{&etcdEvent{Kv: &keyValue{Key: []byte("/registry/pods/c"), CreateRevision: 3, ModRevision: 3, Version: 1, Value: []byte("in the same txn")}}, at(200000000)},
		{&etcdEvent{Type: 1, Kv: &keyValue{Key: []byte("/registry/pods/a"), ModRevision: 4}}, at(300000001)},
		{&etcdEvent{Kv: &keyValue{Key: []byte("/registry/leases/x"), CreateRevision: 5, ModRevision: 5, Version: 1, Value: []byte("leased"), Lease: 7587869348717429000}}, at(0)},
	}
	data, err := json.Marshal(events)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(data)
	file := append(data, sum[:]...)
	const name = "Incr-00000002-00000005-1714557600"
	write(name+".json", nil, data) // the JSON alone, to read in a review
	write(name, nil, file)
	write(name+".gz", func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }, file)
	write(name+".zlib", func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }, file)
	write(name+".Z", func(w io.Writer) io.WriteCloser { return lzw.NewWriter(w, lzw.LSB, 8) }, file)

	// Large enough for the LZW code width to grow to 12 bits and the table to
	// be cleared several times; the test compares the SHA-256 of what it reads.
	var large bytes.Buffer
	for i := 0; large.Len() < 300000; i++ {
		fmt.Fprintf(&large, "/registry/pods/ns-%d/pod-%d=%x;", i%97, i, sha256.Sum256([]byte{byte(i), byte(i >> 8)}))
	}
	largeSum := sha256.Sum256(large.Bytes())
	write("lzw-large.Z", func(w io.Writer) io.WriteCloser { return lzw.NewWriter(w, lzw.LSB, 8) }, large.Bytes())
	write("lzw-large.sha256", nil, []byte(hex.EncodeToString(largeSum[:])+"\n"))
}
