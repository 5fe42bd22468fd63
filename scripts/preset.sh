#!/usr/bin/env bash
# Prints the CMake preset to use: "cuda" when nvcc is installed at /usr/local/cuda (the CUDA
# kernels are then built; they run only where a GPU is present), else "cpu".
if [ -x /usr/local/cuda/bin/nvcc ]; then echo cuda; else echo cpu; fi
