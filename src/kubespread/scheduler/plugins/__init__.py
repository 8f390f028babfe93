"""kube-scheduler's in-tree plugins, one package each, split by extension point."""
