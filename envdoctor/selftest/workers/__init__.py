"""Worker scripts for the self-tests. They run in the TARGET interpreter (Python 3.8+), import torch
themselves, and never import envdoctor: envdoctor only starts them and reads the JSON they write."""
