image_tag = "v1.3.0"
