module kubeloop.dev/bench/admission-hook

go 1.19
