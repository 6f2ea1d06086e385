module github.com/lightcone/lightcone

go 1.26
