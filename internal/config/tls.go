package config

import "fmt"

// TLS secures the TCP listener: a certificate and key from files
// (re-read when they change), and with ClientCAFile, mutual TLS (every
// client presents a certificate signed by one of those CAs).
type TLS struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// Enabled reports whether the TCP listener uses TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// MutualTLS reports whether clients must present a certificate.
func (t TLS) MutualTLS() bool { return t.Enabled() && t.ClientCAFile != "" }

func (t TLS) validate() []error {
	var errs []error
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, fmt.Errorf("server.tls: set both cert_file and key_file"))
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		errs = append(errs, fmt.Errorf("server.tls.client_ca_file: mutual TLS needs cert_file and key_file too"))
	}
	return errs
}
