int cmd_knee(int argc, char **argv) { (void)argc; (void)argv; return 2; }
