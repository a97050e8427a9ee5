"""What the tests share: synthesis, the emulator, Terraform, Helm rendering, checkov, samples."""
