package proto

// On Windows a console has no foreground process group, so FOREGROUND is
// not served there and OPENED does not list it: a host that checks the
// list (as the protocol asks) never sends the question. One sent anyway
// is answered with neither pid nor process (see docs/platforms.md).
//
// A Windows child is given a command line, which OPEN's commandLine
// can hold as it is: that the plain sidecar serves and lists. The
// persistent server, which runs on Unix only, lists neither.
func init() {
	Features = append(withoutForeground(Features), FeatureCommandLine)
	HelloFeatures = append(withoutForeground(HelloFeatures), FeatureCommandLine)
	PersistFeatures = withoutForeground(PersistFeatures)
	PersistHelloFeatures = withoutForeground(PersistHelloFeatures)
}

func withoutForeground(fs []string) []string {
	var out []string
	for _, f := range fs {
		if f != FeatureForeground {
			out = append(out, f)
		}
	}
	return out
}
