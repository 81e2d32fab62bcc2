module capstan.dev/examples/unique-ingress-host

go 1.24

require capstan.dev/capstan v0.0.0

replace capstan.dev/capstan => ../../../plugin-sdk/go
