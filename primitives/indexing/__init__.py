"""The indexing family: `gather_scatter` holds the primitives that read and write the
parts of an array integer operands point at (dynamic slices, gather, scatter), and
`index_expressions` turns a numpy index into them."""
