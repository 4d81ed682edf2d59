package proto

// On Windows a console has no foreground process group, so FOREGROUND is
// not served there and OPENED does not list it: a host that checks the
// list (as the protocol asks) never sends the question. One sent anyway
// is answered with neither pid nor process (see docs/platforms.md).
func init() {
	Features = withoutForeground(Features)
	HelloFeatures = withoutForeground(HelloFeatures)
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
