module github.com/lightcone/lightcone

go 1.26

require gopkg.in/yaml.v3 v3.0.1

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
)
