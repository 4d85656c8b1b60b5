// The admission webhook the webhook-latency bench calls with --hook=go: Go's net/http over TLS,
// `/mutate` answering a JSONPatch that adds a label, `/validate` allowing. The cheapest webhook
// process this machine can run (what a controller-runtime webhook server is built on), so that
// the caller's cost stands out. Arguments: certificate and key files; prints "listening <port>".
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
)

type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID string `json:"uid"`
	} `json:"request,omitempty"`
	Response *response `json:"response,omitempty"`
}

type response struct {
	UID       string `json:"uid"`
	Allowed   bool   `json:"allowed"`
	PatchType string `json:"patchType,omitempty"`
	Patch     string `json:"patch,omitempty"`
}

var patch = base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels","value":{"injected":"yes"}}]`))

func handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var in review
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	if err != nil || in.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	out := review{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Response: &response{UID: in.Request.UID, Allowed: true}}
	if strings.HasPrefix(r.URL.Path, "/mutate") {
		out.Response.PatchType, out.Response.Patch = "JSONPatch", patch
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	if err := http.ServeTLS(ln, http.HandlerFunc(handle), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
