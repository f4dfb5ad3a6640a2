// Package kubernetes holds the sidecar deployment manifests; this test is
// their check in CI (a schema validator needs schemas from the network).
package kubernetes

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/llmrelay/llmrelay/internal/cli"
	"github.com/llmrelay/llmrelay/internal/config"
	"github.com/llmrelay/llmrelay/server"
)

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data       map[string]string `yaml:"data"`
	StringData map[string]string `yaml:"stringData"`
	Spec       struct {
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type podSpec struct {
	TerminationGracePeriodSeconds int         `yaml:"terminationGracePeriodSeconds"`
	InitContainers                []container `yaml:"initContainers"`
	Containers                    []container `yaml:"containers"`
	Volumes                       []struct {
		Name      string                 `yaml:"name"`
		ConfigMap *struct{ Name string } `yaml:"configMap"`
		EmptyDir  map[string]any         `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type probe struct {
	Exec struct {
		Command []string `yaml:"command"`
	} `yaml:"exec"`
}

type container struct {
	Name          string   `yaml:"name"`
	Image         string   `yaml:"image"`
	RestartPolicy string   `yaml:"restartPolicy"`
	Args          []string `yaml:"args"`
	Env           []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
	EnvFrom []struct {
		SecretRef struct {
			Name string `yaml:"name"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	StartupProbe   *probe `yaml:"startupProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	Lifecycle      struct {
		PreStop struct {
			Sleep struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
}

func (c container) mount(volume string) string {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return m.MountPath
		}
	}
	return ""
}

func (c container) env(name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

func load(t *testing.T) map[string]object {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) != 3 {
		t.Fatalf("manifests: %v %v", files, err)
	}
	objs := map[string]object{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var o object
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Errorf("%s: an object without apiVersion, kind or metadata.name: %+v", f, o)
			}
			objs[o.Kind] = o
		}
	}
	return objs
}

func TestSidecarManifests(t *testing.T) {
	objs := load(t)
	cm, secret, dep := objs["ConfigMap"], objs["Secret"], objs["Deployment"]
	pod := dep.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("want the llmrelay sidecar and one app container: %+v", pod)
	}
	relay, app := pod.InitContainers[0], pod.Containers[0]
	if relay.RestartPolicy != "Always" {
		t.Errorf("llmrelay must be a native sidecar (restartPolicy: Always), got %q", relay.RestartPolicy)
	}

	// The configuration the sidecar reads is the ConfigMap's and valid.
	cfgDir := relay.mount("llmrelay-config")
	i := slices.Index(relay.Args, "--config")
	if i < 0 || i+1 >= len(relay.Args) || filepath.Dir(relay.Args[i+1]) != cfgDir {
		t.Fatalf("--config %v is not in the config mount %q", relay.Args, cfgDir)
	}
	text, ok := cm.Data[filepath.Base(relay.Args[i+1])]
	if !ok {
		t.Fatalf("the ConfigMap has no %s", filepath.Base(relay.Args[i+1]))
	}
	cfgFile := filepath.Join(t.TempDir(), "llmrelay.yaml")
	if err := os.WriteFile(cfgFile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := server.CheckConfig(cfgFile); err != nil {
		t.Fatalf("the ConfigMap's configuration: %v", err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}

	// Keys from the Secret, for every provider that reads one.
	if len(relay.EnvFrom) != 1 || relay.EnvFrom[0].SecretRef.Name != secret.Metadata.Name {
		t.Errorf("the sidecar does not take its env from the Secret %q", secret.Metadata.Name)
	}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" && secret.StringData[p.APIKeyEnv] == "" {
			t.Errorf("provider %s reads %s, which the Secret does not define", p.Name, p.APIKeyEnv)
		}
	}

	// Only the shared socket: no TCP listener, and the app dials the socket.
	if v, _ := relay.env("LLMRELAY_LISTEN"); v != "" || cfg.Server.Listen == nil || *cfg.Server.Listen != "" {
		t.Errorf("the sidecar must not listen on TCP (LLMRELAY_LISTEN %q, listen %v)", v, cfg.Server.Listen)
	}
	sock := cfg.Server.UnixSocket
	if relay.mount("llmrelay-socket") != filepath.Dir(sock) || app.mount("llmrelay-socket") != filepath.Dir(sock) {
		t.Errorf("socket %s is not in the volume both containers mount", sock)
	}
	if v, _ := app.env("LLMRELAY_ADDR"); v != "unix://"+sock {
		t.Errorf("the app dials %q, want unix://%s", v, sock)
	}
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name != cm.Metadata.Name {
			t.Errorf("volume %s names ConfigMap %q", v.Name, v.ConfigMap.Name)
		}
	}

	// Drain: preStop, then the server's grace, within the pod's.
	stop := relay.Lifecycle.PreStop.Sleep.Seconds
	if stop <= 0 || time.Duration(pod.TerminationGracePeriodSeconds)*time.Second < time.Duration(stop)*time.Second+cfg.Server.ShutdownGrace.Duration {
		t.Errorf("terminationGracePeriodSeconds %d < preStop %ds + shutdown_grace %s", pod.TerminationGracePeriodSeconds, stop, cfg.Server.ShutdownGrace)
	}
	if relay.Resources.Requests["cpu"] == "" || relay.Resources.Requests["memory"] == "" || relay.Resources.Limits["memory"] == "" {
		t.Errorf("sidecar resources: %+v", relay.Resources)
	}

	// The probes are the health command, and it passes against a server
	// running this configuration on a socket of the test's own.
	t.Setenv("OPENAI_API_KEY", "sk-test-not-used")
	dir, err := os.MkdirTemp("", "k8s") // short: unix socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	local := filepath.Join(dir, "llmrelay.sock")
	cfg.Server.UnixSocket = local
	cfg.Server.DrainDelay = config.Duration{}
	srv, err := server.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	lis, err := srv.Listeners()
	if err != nil {
		t.Fatal(err)
	}
	if len(lis) != 1 || lis[0].Addr().Network() != "unix" {
		t.Fatalf("listeners: %v", lis)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, []net.Listener{lis[0]}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	for name, p := range map[string]*probe{"startup": relay.StartupProbe, "readiness": relay.ReadinessProbe, "liveness": relay.LivenessProbe} {
		if p == nil || len(p.Exec.Command) < 2 || p.Exec.Command[0] != "/llmrelay" || p.Exec.Command[1] != "health" {
			t.Errorf("%s probe is not the health command: %+v", name, p)
			continue
		}
		args := slices.Clone(p.Exec.Command[1:])
		for j, a := range args {
			args[j] = strings.Replace(a, "unix://"+sock, "unix://"+local, 1)
		}
		var out, errOut bytes.Buffer
		if code := cli.Run(context.Background(), args, strings.NewReader(""), &out, &errOut); code != cli.ExitOK {
			t.Errorf("%s probe %v: exit %d: %s", name, args, code, errOut.String())
		}
	}
}
