// The `symmflow` command line (DESIGN.md §5).
int main(int argc, char** argv) { return 0; }
