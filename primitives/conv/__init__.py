"""The convolution family: `conv_general_dilated` and the windowed reductions."""
