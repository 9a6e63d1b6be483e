"""Random numbers: keys and their bits (`keys`), and the inverse-CDF samples with
derivatives of their own (`distributions`)."""
