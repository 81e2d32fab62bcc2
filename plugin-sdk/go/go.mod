module capstan.dev/capstan

go 1.24
