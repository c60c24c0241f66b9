image_tag   = "v1.2.0"
datacenters = ["eu-1", "eu-2"]
labels = {
  team = "web"
}
