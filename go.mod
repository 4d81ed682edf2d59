module github.com/ptyplex/ptyplex

go 1.26.0

require (
	github.com/creack/pty v1.1.24 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
