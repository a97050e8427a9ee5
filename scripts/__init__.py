"""Build, test and bench helpers the Makefile and the tests use; run each as `python3 -m scripts.<name>`."""
