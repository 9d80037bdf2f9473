nn = null
